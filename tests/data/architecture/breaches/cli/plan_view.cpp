#include "planner/plan.hpp"
#include "planner/rank.hpp"
// rank(job) in a comment is no call
const char* k = "rank(";
void view() { auto r = rank(job, offers); auto s = gpurent::estimate_speed(job, card, load); parse_rank_by("cost"); }
