#include "apps/mpi/layout.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace lanecast::mpi {
namespace {

struct Shape {
  MPI_Count size = 0;
  MPI_Aint extent = 0, true_lb = 0, true_extent = 0;
};

Shape shape_of(MPI_Datatype t) {
  Shape s;
  MPI_Aint lb = 0;
  PMPI_Type_size_x(t, &s.size);
  PMPI_Type_get_extent(t, &lb, &s.extent);
  PMPI_Type_get_true_extent(t, &s.true_lb, &s.true_extent);
  return s;
}

bool is_named(MPI_Datatype t) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

bool in_order(MPI_Datatype t);

// `n` elements of `old` one after another, `old`'s extent apart.
bool repeated_in_order(MPI_Datatype old, MPI_Aint n) {
  if (n <= 0) return true;
  const Shape s = shape_of(old);
  return in_order(old) && (n == 1 || s.extent == static_cast<MPI_Aint>(s.size));
}

// One element's typemap lies in memory order with no gap and no overlap:
// its bytes in memory are its packed bytes. Predefined types, and the
// constructors that keep them so; any other constructor is packed (a struct
// or an indexed type may be gapless yet out of order).
bool in_order(MPI_Datatype t) {
  const Shape s = shape_of(t);
  if (s.true_extent != static_cast<MPI_Aint>(s.size)) return false;
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return true;
  std::vector<int> ints(static_cast<size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<size_t>(nd));
  PMPI_Type_get_contents(t, ni, na, nd, ints.data(), addrs.data(), types.data());
  bool ok = false;
  if (nd == 1) {
    const MPI_Datatype old = types[0];
    switch (combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:  // the same typemap; the extent is checked by the caller
        ok = in_order(old);
        break;
      case MPI_COMBINER_CONTIGUOUS:  // ints: count
        ok = ni >= 1 && repeated_in_order(old, ints[0]);
        break;
      case MPI_COMBINER_VECTOR:  // ints: count, blocklength, stride (in elements of old)
        ok = ni >= 3 && (ints[0] <= 1 || ints[1] == ints[2]) &&
             repeated_in_order(old, static_cast<MPI_Aint>(ints[0]) * ints[1]);
        break;
      case MPI_COMBINER_HVECTOR: {  // ints: count, blocklength; addrs: stride in bytes
        const Shape o = shape_of(old);
        ok = ni >= 2 && na >= 1 && (ints[0] <= 1 || addrs[0] == static_cast<MPI_Aint>(ints[1]) * o.extent) &&
             repeated_in_order(old, static_cast<MPI_Aint>(ints[0]) * ints[1]);
        break;
      }
      default:
        break;
    }
  }
  for (MPI_Datatype& d : types)
    if (!is_named(d)) PMPI_Type_free(&d);
  return ok;
}

// Elements of `size` bytes that fit one MPI_Pack call (its sizes are int).
MPI_Count per_piece(MPI_Count size) { return size <= 0 ? 1 : std::max<MPI_Count>(1, INT_MAX / size); }

}  // namespace

Layout layout_of(MPI_Datatype type, MPI_Count count) {
  Layout l;
  if (count == 0) {
    l.in_place = true;
    return l;
  }
  const Shape s = shape_of(type);
  l.offset = s.true_lb;
  l.in_place = in_order(type) && (count == 1 || s.extent == static_cast<MPI_Aint>(s.size));
  return l;
}

namespace {

// The elements in pieces of at most INT_MAX bytes (MPI_Pack takes int
// sizes): move(first element's offset, elements, packed offset, bytes)
// returns MPI's code and the position MPI reached in the piece. MPI_SUCCESS,
// MPI's error, or MPI_ERR_TRUNCATE when the packed form is not `bytes` long.
template <class Move>
int in_pieces(MPI_Count count, MPI_Datatype type, uint64_t bytes, Move&& move) {
  const Shape s = shape_of(type);
  if (s.size > INT_MAX) return MPI_ERR_TYPE;
  const MPI_Count step = per_piece(s.size);
  uint64_t done = 0;
  for (MPI_Count first = 0; first < count; first += step) {
    const MPI_Count n = std::min(step, count - first);
    const auto piece = static_cast<int>(n * s.size);
    if (done + static_cast<uint64_t>(piece) > bytes) return MPI_ERR_TRUNCATE;
    int position = 0;
    const int rc = move(first * s.extent, static_cast<int>(n), done, piece, &position);
    if (rc != MPI_SUCCESS) return rc;
    if (position != piece) return MPI_ERR_TRUNCATE;
    done += static_cast<uint64_t>(piece);
  }
  return done == bytes ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
}

}  // namespace

int pack(const void* buf, MPI_Count count, MPI_Datatype type, std::byte* out, uint64_t bytes, MPI_Comm comm) {
  return in_pieces(count, type, bytes, [&](MPI_Aint at, int n, uint64_t done, int piece, int* position) {
    return PMPI_Pack(static_cast<const char*>(buf) + at, n, type, out + done, piece, position, comm);
  });
}

int unpack(const std::byte* in, uint64_t bytes, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
  return in_pieces(count, type, bytes, [&](MPI_Aint at, int n, uint64_t done, int piece, int* position) {
    // MPI_Unpack's input is not const in MPI-2 headers.
    return PMPI_Unpack(const_cast<std::byte*>(in + done), piece, position, static_cast<char*>(buf) + at, n, type, comm);
  });
}

}  // namespace lanecast::mpi
