#include "drivers/port.h"
