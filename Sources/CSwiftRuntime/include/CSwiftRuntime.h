#ifndef CSWIFTRUNTIME_H
#define CSWIFTRUNTIME_H

#include <stdbool.h>

/// Retains the Swift object at `object` unless its deinitialisation has begun; returns whether
/// it did. A front for the Swift runtime's own `swift_tryRetain` (exported by libswiftCore), which
/// the language offers no spelling for: a context's registry holds its objects unretained and
/// needs it to hand out an object that another thread may be releasing for the last time.
bool coredata_swift_try_retain(void *object);

#endif
