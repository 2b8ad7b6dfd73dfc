// `lanecast tune`: measures every algorithm over a size sweep where the group
// runs - in process, on a testbed of namespaces, or on real hosts from a
// group file - with `lanecast bench` itself, and writes a rules file that
// `--algo auto` reads (`--auto-rules FILE`): the fastest measured algorithm
// at each size, with what was measured beside each rule as comments.
// `--check` then measures, side by side, the fastest algorithm of each size,
// auto with the new rules and auto with the built-in ones.
#pragma once

namespace lanecast::apps {

int tune_main(int argc, char** argv);

}  // namespace lanecast::apps
