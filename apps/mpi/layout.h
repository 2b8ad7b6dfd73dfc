// Where a broadcast's bytes lie in this rank's buffer. MPI_Bcast only asks
// that the ranks' type signatures match, so ranks may pass different
// datatypes for the same bytes (a vector on one, a contiguous run on
// another): how a rank lays them out is its own business, decided here,
// never a reason to leave lanecast (that choice is made on the byte count,
// which every rank knows alike). A layout whose typemap runs in memory order
// without gaps is sent and received in place; any other is packed into a
// scratch buffer before the broadcast (root) or unpacked after it, with MPI's
// own PMPI_Pack / PMPI_Unpack, so its bytes are exactly the bytes MPI would
// have moved.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

namespace lanecast::mpi {

struct Layout {
  bool in_place = false;  // count elements lie in order at buf + offset, no gaps
  MPI_Aint offset = 0;    // the first byte's offset from buf (the true lower bound)
};

// `count` elements of `type`, a committed datatype.
Layout layout_of(MPI_Datatype type, MPI_Count count);

// Pack `count` elements of `type` at `buf` into `bytes` bytes at `out`, or
// unpack them back; pieces of at most INT_MAX bytes (MPI_Pack takes int
// sizes). MPI_SUCCESS, or MPI's error code; MPI_ERR_TRUNCATE when the packed
// form is not `bytes` long.
int pack(const void* buf, MPI_Count count, MPI_Datatype type, std::byte* out, uint64_t bytes, MPI_Comm comm);
int unpack(const std::byte* in, uint64_t bytes, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);

}  // namespace lanecast::mpi
