#include "planner/plan.hpp"
#include "cli/services.hpp"
