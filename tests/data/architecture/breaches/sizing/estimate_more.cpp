#include "planner/plan.hpp"
