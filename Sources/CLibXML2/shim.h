#pragma once
// Debian builds libxml2 with ICU; its ICU types clash with Foundation's copy of ICU in the same
// build ("'UErrorCode' has different definitions in different modules"). The XML store needs no
// ICU encodings (it reads UTF-8), so the ICU part of libxml2's headers is switched off.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
