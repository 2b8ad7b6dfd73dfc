/* An ordinary MPI program that broadcasts - nothing in it knows of
 * lanecast - for tests/mpi/mpi_shim_test.sh, which runs it with
 * liblanecast-mpi preloaded. Every MPI_Bcast it makes is checked twice:
 * against the pattern the root wrote, and against what MPI's own broadcast
 * (PMPI_Bcast, MPI's profiling name, which no library takes over) delivers
 * for the same call. It counts its MPI_Bcast calls and prints the count, so
 * the test can hold the library's "carried" to it: a broadcast that went to
 * MPI unseen fails the test.
 *
 *   MPI_COMM_WORLD   every size below (0 B .. 16 MiB, odd ones among them)
 *                    from every root; 16 MiB from the first and last root
 *   a split          even and odd ranks, every size up to 1 MiB, every root
 *   a dup            of MPI_COMM_WORLD; freed, made again, broadcast again
 *   datatypes        a vector (every other int) on even ranks against
 *                    contiguous ints on odd ones, roots of both kinds
 *   freeing          odd ranks free their half while the even ranks still
 *                    broadcast on theirs; the rest is left for MPI_Finalize
 *
 * usage: mpirun ... bcast_check [quick] [multiple]
 *   quick: sizes up to 64 KiB only; multiple: MPI_Init_thread asking for
 *   MPI_THREAD_MULTIPLE
 * prints "bcast_check: rank R calls N bytes B ok" (or "... FAILED" lines);
 * exit status 0 when every byte matched on this rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long calls, failures;
static unsigned long long bytes_sent;
static int world_rank;

static unsigned char pattern_byte(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + i / 8) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return (unsigned char)(x >> (8 * (i % 8)));
}

static void fill(unsigned char* b, uint64_t n, uint64_t seed) {
  for (uint64_t i = 0; i < n; ++i) b[i] = pattern_byte(seed, i);
}

static void failed(const char* what, const char* comm, uint64_t size, int root, uint64_t at) {
  ++failures;
  fprintf(stderr, "bcast_check: rank %d FAILED %s on %s, %llu bytes from root %d, first bad byte %llu\n", world_rank,
          what, comm, (unsigned long long)size, root, (unsigned long long)at);
}

static uint64_t first_difference(const unsigned char* a, const unsigned char* b, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return i;
  return n;
}

/* One broadcast of `size` bytes from `root` on `comm` through MPI_Bcast,
 * and the same through PMPI_Bcast: both must hold the root's pattern. */
static void one(MPI_Comm comm, const char* name, uint64_t size, int root, uint64_t seed) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned char* got = malloc(size + 1);
  unsigned char* ref = malloc(size + 1);
  unsigned char* want = malloc(size + 1);
  if (got == NULL || ref == NULL || want == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  fill(want, size, seed);
  if (rank == root) {
    memcpy(got, want, size);
    memcpy(ref, want, size);
  } else {
    memset(got, 0xA5, size);
    memset(ref, 0x5A, size);
  }
  got[size] = ref[size] = 0xEE; /* a byte past the end must stay */
  MPI_Bcast(got, (int)size, MPI_BYTE, root, comm);
  ++calls;
  bytes_sent += size;
  PMPI_Bcast(ref, (int)size, MPI_BYTE, root, comm);
  uint64_t at = first_difference(got, want, size);
  if (at != size) failed("pattern", name, size, root, at);
  at = first_difference(got, ref, size);
  if (at != size) failed("against PMPI_Bcast", name, size, root, at);
  if (got[size] != 0xEE) failed("past the end", name, size, root, size);
  free(got);
  free(ref);
  free(want);
}

static void sizes_every_root(MPI_Comm comm, const char* name, const uint64_t* sizes, int n, uint64_t seed) {
  int p;
  MPI_Comm_size(comm, &p);
  for (int s = 0; s < n; ++s)
    for (int root = 0; root < p; ++root) one(comm, name, sizes[s], root, seed + (uint64_t)s * 131 + (uint64_t)root);
}

/* n ints: a vector of every other int in a buffer of 2n on even world
 * ranks, n contiguous ints on odd ones - the same type signature. */
static void datatypes(int n, int root) {
  const int strided = world_rank % 2 == 0;
  MPI_Datatype vec;
  MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int* got = malloc(sizeof(int) * (size_t)(2 * n + 1));
  int* ref = malloc(sizeof(int) * (size_t)(2 * n + 1));
  if (got == NULL || ref == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  const int span = strided ? 2 * n : n;
  for (int i = 0; i < span + 1; ++i) got[i] = ref[i] = -1 - i; /* the gaps must stay as they are */
  if (world_rank == root)
    for (int i = 0; i < n; ++i) got[strided ? 2 * i : i] = ref[strided ? 2 * i : i] = 1000003 * i + root;
  if (strided) {
    MPI_Bcast(got, 1, vec, root, MPI_COMM_WORLD);
    PMPI_Bcast(ref, 1, vec, root, MPI_COMM_WORLD);
  } else {
    MPI_Bcast(got, n, MPI_INT, root, MPI_COMM_WORLD);
    PMPI_Bcast(ref, n, MPI_INT, root, MPI_COMM_WORLD);
  }
  ++calls;
  bytes_sent += (unsigned long long)n * sizeof(int);
  for (int i = 0; i < span + 1; ++i) {
    const int element = strided ? (i % 2 == 0 && i < 2 * n) : i < n;
    const int index = strided ? i / 2 : i;
    const int want = element ? 1000003 * index + root : -1 - i;
    if (got[i] != want) {
      failed(strided ? "vector datatype" : "contiguous beside a vector", "MPI_COMM_WORLD", (uint64_t)n * 4, root,
             (uint64_t)i * 4);
      break;
    }
    if (got[i] != ref[i]) {
      failed("datatype against PMPI_Bcast", "MPI_COMM_WORLD", (uint64_t)n * 4, root, (uint64_t)i * 4);
      break;
    }
  }
  free(got);
  free(ref);
  MPI_Type_free(&vec);
}

int main(int argc, char** argv) {
  int quick = 0, multiple = 0;
  for (int a = 1; a < argc; ++a) {
    quick |= strcmp(argv[a], "quick") == 0;
    multiple |= strcmp(argv[a], "multiple") == 0;
  }
  if (multiple) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int p;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  const uint64_t sizes[] = {0, 1, 2, 3, 7, 100, 1427, 1428, 1429, 4095, 65537, 1048577, 4194301};
  const int n_sizes = quick ? 11 : (int)(sizeof sizes / sizeof sizes[0]);
  sizes_every_root(MPI_COMM_WORLD, "MPI_COMM_WORLD", sizes, n_sizes, 1);
  if (!quick) {
    one(MPI_COMM_WORLD, "MPI_COMM_WORLD", 16u << 20, 0, 77);
    one(MPI_COMM_WORLD, "MPI_COMM_WORLD", (16u << 20) - 3, p - 1, 78);
  }

  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  sizes_every_root(half, world_rank % 2 ? "the odd half" : "the even half", sizes, quick ? 8 : 12, 1000);

  MPI_Comm twin;
  MPI_Comm_dup(MPI_COMM_WORLD, &twin);
  const uint64_t few[] = {1, 1429, 65536};
  sizes_every_root(twin, "a dup", few, 3, 2000);
  MPI_Comm_free(&twin);
  MPI_Comm_dup(MPI_COMM_WORLD, &twin);
  sizes_every_root(twin, "a dup made again", few, 3, 3000);

  for (int root = 0; root < 2 && root < p; ++root) {
    datatypes(1, root);
    datatypes(1000, root);
    if (!quick) datatypes(300000, root);
  }

  /* Odd ranks free their half at once; the even ranks go on broadcasting on
   * theirs first, then free it, and all meet on the dup. */
  if (world_rank % 2 == 1) {
    MPI_Comm_free(&half);
  } else {
    for (int i = 0; i < 4; ++i) one(half, "the even half", quick ? 65536 : 1u << 20, 0, 4000 + (uint64_t)i);
    MPI_Comm_free(&half);
  }
  one(twin, "a dup made again", 100000, p - 1, 5000);

  long all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  printf("bcast_check: rank %d calls %ld bytes %llu %s\n", world_rank, calls, bytes_sent,
         failures == 0 ? "ok" : "FAILED");
  fflush(stdout);
  /* twin and MPI_COMM_WORLD keep their groups until MPI_Finalize. */
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
