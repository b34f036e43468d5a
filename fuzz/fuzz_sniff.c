/* libFuzzer target for the ClientHello SNI and HTTP Host sniffers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[256];
    enum sg_sniff s = sg_sniff_name(data, size, name, sizeof name);
    if (strlen(name) >= sizeof name || (s == SG_SNIFF_NEED_MORE && name[0]))
        abort();
    return 0;
}
