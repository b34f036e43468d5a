/* Where an ordinary user's run gets a cgroup on a systemd machine: the
 * user@UID.service the system delegates to each user (issue 52, item 2),
 * found from the process's own cgroup path, in a hierarchy built here in
 * a temporary folder (this machine's is v1, and its PID 1 is no systemd).
 * What the kernel then does with it (a child cgroup, a move into it) needs
 * such a machine; this checks which folder is chosen and which refused. */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

#define SVC "/user.slice/user-1000.slice/user@1000.service"

static char *hierarchy(const char *subtree_control)
{
    char *top = th_tmpdir();
    th_write(top, SVC "/cgroup.subtree_control", subtree_control);
    th_mkdirs(top, SVC "/app.slice/app-term.scope");
    return top;
}

static void check(const char *top, const char *path, unsigned uid, const char *want)
{
    cleanup_free char *got = sg_cgroup_user_service(top, path, uid);
    if (!want) {
        if (got)
            fail_msg("%s as uid %u: chose %s, wanted none", path, uid, got);
        return;
    }
    cleanup_free char *full = sg_xasprintf("%s%s", top, want);
    if (!got || strcmp(got, full))
        fail_msg("%s as uid %u: chose %s, wanted %s", path, uid, got ? got : "none", full);
}

static void the_users_service_holding_this_process_is_chosen(void **st)
{
    (void)st;
    char *top = hierarchy("cpu memory pids\n");
    check(top, SVC "/app.slice/app-term.scope", 1000, SVC);
    check(top, SVC, 1000, SVC); /* the service itself */
    th_rmrf(top);
    free(top);
}

static void another_users_service_or_a_session_is_not(void **st)
{
    (void)st;
    char *top = hierarchy("memory pids\n");
    check(top, SVC "/app.slice/app-term.scope", 1001, NULL);
    /* an ssh login's scope is the user's slice, outside the service: a
     * move from there needs the slice, which is root's */
    check(top, "/user.slice/user-1000.slice/session-3.scope", 1000, NULL);
    /* only a whole component names the unit */
    check(top, "/user.slice/user-1000.slice/user@1000.services/x", 1000, NULL);
    check(top, "/user.slice/user-1000.slice/user@10000.service/x", 1000, NULL);
    check(top, SVC "/../../x", 1000, NULL);
    th_rmrf(top);
    free(top);
}

static void a_service_without_memory_on_for_its_children_is_not(void **st)
{
    (void)st;
    char *top = hierarchy("cpu pids\n"); /* memory delegated nowhere */
    check(top, SVC "/app.slice/app-term.scope", 1000, NULL);
    th_rmrf(top);
    free(top);
    top = hierarchy("pids memoryx\n");
    check(top, SVC "/app.slice/app-term.scope", 1000, NULL);
    th_rmrf(top);
    free(top);
}

static void a_service_this_user_cannot_write_is_not(void **st)
{
    (void)st;
    char *top = hierarchy("memory pids\n");
    cleanup_free char *svc = sg_xasprintf("%s%s", top, SVC);
    chmod(svc, 0555);
    pid_t pid = fork();
    if (pid == 0) { /* root may write anything: as root, look as nobody */
        if (geteuid() == 0 && setresuid(65534, 65534, 65534) < 0)
            _exit(2);
        _exit(sg_cgroup_user_service(top, SVC "/app.slice/app-term.scope", 1000) ? 1 : 0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    chmod(svc, 0755);
    th_rmrf(top);
    free(top);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("a service folder this user cannot write was chosen (status %d)", status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_users_service_holding_this_process_is_chosen),
        cmocka_unit_test(another_users_service_or_a_session_is_not),
        cmocka_unit_test(a_service_without_memory_on_for_its_children_is_not),
        cmocka_unit_test(a_service_this_user_cannot_write_is_not),
    };
    return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
