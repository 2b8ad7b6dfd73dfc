// Static builds only (meson -Dstatic_binary=true). hwloc's Linux backend
// asks libudev for the names of block and network devices; Debian ships no
// static libudev, and a fully static program could not load one anyway. So
// the static program answers hwloc's five libudev calls as a host without
// udev would: udev_new() gives NULL, and hwloc then reads sysfs alone (what
// it does wherever udev is missing). lanecast uses hwloc for CPU placement,
// which needs no udev.
extern "C" {

struct udev;
struct udev_device;

udev* udev_new() { return nullptr; }
udev* udev_unref(udev*) { return nullptr; }
udev_device* udev_device_new_from_subsystem_sysname(udev*, const char*, const char*) { return nullptr; }
udev_device* udev_device_unref(udev_device*) { return nullptr; }
const char* udev_device_get_property_value(udev_device*, const char*) { return nullptr; }

}  // extern "C"
