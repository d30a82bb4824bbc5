#pragma once
// The two sides of one A/B (`accelbench ab`) paired config by config, although what the sides
// differ in is often part of the config: `--set library=onednn` against `--set library=openblas`,
// or two external programs (the command is a config value). A comparison pairs runs by their
// config key, so such sides would share no config. Each side's child measured the same plan in
// the same order, and `ab` stores each run's place in it (run.extra.ab.slot): the runs of one slot
// are the same measurement on both sides, whatever their configs say.
#include <cstddef>

#include "harness/app/query/selector.hpp"

namespace accelbench::query {

// When every run of both selections belongs to one A/B (one run.extra.ab.id) and each slot has one
// config a side, gives the runs of each slot whose sides' configs differ one config on both sides:
// the baseline's, with each value the sides differ in written "BASELINE->CANDIDATE" (a key only one
// side has: "(unset)" for the other), so that the comparison pairs them and its output says what
// differed. In memory only: the stored runs keep their own configs. A slot whose workload or
// backend differ is left as it is (unpaired). Returns the slots relabelled (0: nothing to do).
size_t align_ab_sides(selection& baseline, selection& candidate);

} // namespace accelbench::query
