#include "CSwiftRuntime.h"

// Declared here, not in the header, so that Swift code importing the header never sees a second
// declaration of a runtime function the compiler knows by itself. The runtime's definition
// (stdlib/public/runtime/HeapObject.cpp) returns the object, or null when its deinit has begun.
extern void *swift_tryRetain(void *object);

bool coredata_swift_try_retain(void *object) {
    return swift_tryRetain(object) != 0;
}
