// A fixture for tests/app/layers.cmake (optim may include render).
#include "render/stage.h"
