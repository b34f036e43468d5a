/* skillgate wrap: any command under the sandbox and broker a skill gets
 * (run/wrap.h), through the same front end as `skillgate run`. */
#include <stdio.h>

#include "cli.h"

void sg_wrap_help(void)
{
    sg_command_usage(stdout, "wrap");
    printf("\n  Runs CMD as Claude Code's Bash sandbox would, under skillgate's kernel\n"
           "  sandbox and broker: the working folder and its subfolders writable, the\n"
           "  rest of the machine readable except credentials (masked as for a skill),\n"
           "  every program run but each execve checked against your deny and ask rules\n"
           "  (--policy) on the program file itself, writes elsewhere and hosts asked.\n"
           "  stdin, stdout, stderr and the exit status are the command's; skillgate\n"
           "  speaks on stderr only when it stopped something. Events, trace and audit\n"
           "  record as for any run.\n"
           "\n  -C, --cwd DIR          the working folder (default: this one); never /, a\n"
           "                         home, skillgate's or an agent's own folder\n"
           "      --settings FILE    sandbox settings: srt's format, or a Claude Code\n"
           "                         settings file (its `sandbox` object); default:\n"
           "                         ~/.srt-settings.json and ~/.claude/settings.json, and\n"
           "                         what the project's .claude/settings*.json narrow\n"
           "      --env NAME         pass a variable whose name says it is a secret (the\n"
           "                         others pass as they are)\n"
           "      --write DIR        another writable folder for this call\n"
           "  -w, --watch, -j, --json, -t, --timeout S, --memory MB, -o, --trace-out FILE,\n"
           "  --policy FILE, --prompt tty|deny|attached|exec:..., --prompt-timeout S,\n"
           "  --no-records, --allow-degraded, --resolve, --allow-upstream, --publish: as for\n"
           "  run\n"
           "\nExit status: the command's; 124 timeout, 125 sandbox setup failed, 126\n"
           "refused (settings or folder), 127 command not found, 128+N killed by\n"
           "signal N; 74 the records could not be kept; 2 bad command line.\n");
}

int cmd_wrap(int argc, char **argv)
{
    return sg_run_front(argc, argv, true);
}
