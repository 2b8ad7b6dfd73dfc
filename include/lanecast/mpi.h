/* liblanecast-mpi: MPI_Bcast through lanecast for unmodified MPI programs
 * (docs/mpi.md). A program needs nothing of this header to be carried: the
 * library is preloaded (LD_PRELOAD) or linked before the MPI library, and
 * takes MPI_Bcast over through MPI's profiling interface. This header is for
 * programs and tests that want to read what it did.
 *
 * C, so that any MPI program can call it. A program that may also run
 * without the library looks the function up instead of linking it:
 *
 *   int (*get)(lanecast_mpi_stats*, size_t) =
 *       (int (*)(lanecast_mpi_stats*, size_t))dlsym(RTLD_DEFAULT, "lanecast_mpi_get_stats");
 *   lanecast_mpi_stats s;
 *   if (get != NULL && get(&s, sizeof s) == 0) printf("carried %llu\n", (unsigned long long)s.carried);
 */
#ifndef LANECAST_MPI_H
#define LANECAST_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This process's MPI_Bcast calls since MPI_Init, by where they went. Every
 * decision is one all ranks of a communicator make alike (docs/mpi.md), so
 * the counts agree across the ranks of a job that broadcast on the same
 * communicators. */
typedef struct lanecast_mpi_stats {
  uint64_t carried;          /* MPI_Bcast calls lanecast carried */
  uint64_t carried_bytes;    /* their bytes (count x type size) */
  uint64_t packed;           /* ... of which this rank packed or unpacked (a non-contiguous datatype) */
  uint64_t fell_back;        /* MPI_Bcast calls passed to MPI (PMPI_Bcast): the sum of the reasons below */
  uint64_t fell_back_off;    /* lanecast off for the job: LANECAST_MPI=off, MPI_THREAD_MULTIPLE, or it could not start */
  uint64_t fell_back_small;  /* fewer bytes than LANECAST_MPI_MIN_BYTES */
  uint64_t fell_back_comm;   /* an intercommunicator, a communicator of one rank, or arguments MPI must refuse */
  uint64_t fell_back_group;  /* a communicator whose lanecast group could not form */
  uint64_t groups_formed;    /* communicators that got a lanecast group */
  uint64_t groups_refused;   /* communicators whose group could not form (each said why once) */
  int32_t enabled;           /* 1 when lanecast carries this job's broadcasts, 0 when all go to MPI */
  int32_t world_rank;
} lanecast_mpi_stats;

/* Fills *out (size: sizeof(lanecast_mpi_stats) as the caller knows it; a
 * smaller struct of an older header gets its leading fields). Returns 0, or
 * -1 for a null pointer. Any thread, any time (before MPI_Init: zeros). */
int lanecast_mpi_get_stats(lanecast_mpi_stats* out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* LANECAST_MPI_H */
