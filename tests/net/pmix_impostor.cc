// A PMIx client that takes a lanecast member's place in a job and puts
// something else under the group's key - bytes that are no endpoint record,
// or a string - then joins the fence like a member. The real members must
// refuse it by its rank, never crash (tests/net/pmix_test.sh).
//
// usage: pmix_impostor KEY garbage|string
#include <pmix.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "garbage") != 0 && std::strcmp(argv[2], "string") != 0)) {
    std::fprintf(stderr, "usage: %s KEY garbage|string\n", argv[0]);
    return 2;
  }
  pmix_proc_t me;
  PMIX_PROC_CONSTRUCT(&me);
  if (PMIx_Init(&me, nullptr, 0) != PMIX_SUCCESS) {
    std::fprintf(stderr, "pmix_impostor: PMIx_Init failed\n");
    return 1;
  }
  // Looks like a record at first (the mark, version 1) and then lies about
  // its lanes: a reader that trusts lengths would run off the end.
  char garbage[] = {'L', 'C', 'E', 'P', 1, 0, 3, 0, 2, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9,
                    9, 9, 9, 9, 9, 9, 9, 9, 24, 1, 2};
  std::string text = "not an endpoint";
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  if (std::strcmp(argv[2], "garbage") == 0) {
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = garbage;
    v.data.bo.size = sizeof garbage;
  } else {
    v.type = PMIX_STRING;
    v.data.string = text.data();
  }
  PMIx_Put(PMIX_GLOBAL, argv[1], &v);
  PMIx_Commit();
  pmix_proc_t job;
  PMIX_PROC_CONSTRUCT(&job);
  PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
  bool collect = true;
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIx_Info_load(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  const pmix_status_t rc = PMIx_Fence(&job, 1, &info, 1);
  PMIX_INFO_DESTRUCT(&info);
  PMIx_Finalize(nullptr, 0);
  return rc == PMIX_SUCCESS ? 0 : 1;
}
