/* unit_main.c — the main() of every Check suite (see unit.h). */
#include <stdlib.h>

#include "unit.h"

int main(void)
{
    SRunner *sr;
    int failed;

    if (rr_unit.begin && rr_unit.begin(rr_unit.name) != 0)
        return EXIT_FAILURE;
    sr = srunner_create(rr_unit.suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (rr_unit.end)
        rr_unit.end();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
