// A fixture for tests/app/layers.cmake (a header, not a test): render reaching up into optim, which the
// check must refuse.
#include "optim/objective.h"
#include <adjoint/app/optimization.h>
