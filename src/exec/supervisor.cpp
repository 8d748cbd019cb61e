#include "exec/supervisor.hpp"
