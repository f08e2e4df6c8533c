#pragma once
#include <lz4.h>
