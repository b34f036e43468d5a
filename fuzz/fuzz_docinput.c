/* libFuzzer target for the reader of the input a SKILL.md documents
 * (manifest/docinput.c): any bytes of a skill's instructions up to the cap.
 * Either none is found, or what is found is one JSON object no longer than
 * the input line's cap. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docinput.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *found = sg_documented_input((const char *)data, size);
    if (!found)
        return 0;
    json_t *j = json_loads(found, 0, NULL);
    if (!json_is_object(j) || strlen(found) > SG_DOCINPUT_JSON_MAX)
        abort();
    json_decref(j);
    free(found);
    return 0;
}
