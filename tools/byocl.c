/* byocl: the command-line tool. Registers the built-in targets, loads --plugin libraries,
 * finds the command and hands it its arguments. */
#include <string.h>

#include "byocl/limits.h"
#include "byocl/target.h"
#include "byocl/plugin.h"
#include "byocl/target.h"
#include "cli.h"
#include "cli_progress.h"

extern const cli_command cli_cmd_partition, cli_cmd_extract;
extern const cli_command cli_cmd_split, cli_cmd_run_stages, cli_cmd_dot;

extern const cli_command cli_cmd_conformance;
extern const cli_command cli_cmd_replay, cli_cmd_bisect;
extern const cli_command cli_cmd_bench;

static const cli_command *const commands[] = {
    &cli_cmd_print,
    &cli_cmd_run,
    &cli_cmd_info,
    &cli_cmd_ops,
    &cli_cmd_partition,
    &cli_cmd_extract,
    &cli_cmd_split,
    &cli_cmd_run_stages,
    &cli_cmd_dot,
    &cli_cmd_conformance,
    &cli_cmd_replay,
    &cli_cmd_bisect,
    &cli_cmd_bench,
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const cli_command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static void print_overview(FILE *f)
{
    fprintf(f,
            "Usage: byocl COMMAND [options]\n"
            "\n"
            "byocl compiles and runs tensor graphs written in TVM Relay's vocabulary, for\n"
            "engineers bringing up an accelerator behind a deep-learning compiler.\n"
            "\n"
            "Commands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-11s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f,
            "  %-11s %s\n"
            "\n"
            "Options:\n"
            "  -h, --help     show this help and exit\n"
            "  --version      print the version and exit\n"
            "  --plugin LIB   load a target plugin (a shared library) before the command;\n"
            "                 repeatable (docs/writing-a-target.md)\n"
            "\n"
            "Run 'byocl COMMAND --help' for a command's options.\n"
            "%s\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n",
            "help", "show the help of a command (byocl help COMMAND)", CLI_MODEL_HELP);
}

static int run_command(const cli_command *cmd, int argc, char **argv)
{
    cli_args args;
    int rc = cli_parse(cmd, argc, argv, &args);
    if (rc == -1)
        rc = CLI_EXIT_OK; /* --help was printed */
    else if (rc == CLI_EXIT_OK)
        rc = cmd->run(cmd, &args);
    cli_args_free(&args);
    return rc;
}

static int help_command(int argc, char **argv)
{
    if (argc == 0) {
        print_overview(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 1)
        return cli_usage_error(NULL, "'byocl help' takes one command, got %d arguments", argc);
    const cli_command *cmd = find_command(argv[0]);
    if (!cmd)
        return cli_usage_error(NULL, "unknown command '%s'", argv[0]);
    cli_print_help(cmd, stdout);
    return CLI_EXIT_OK;
}

/* Loads the leading `--plugin LIB` / `--plugin=LIB` options; returns how many arguments
 * they took (>= 0), or -1 after printing an error (*rc set). */
static int load_plugins(int argc, char **argv, int *rc)
{
    int used = 0;
    while (used < argc && strncmp(argv[used], "--plugin", 8) == 0 &&
           (argv[used][8] == '\0' || argv[used][8] == '=')) {
        const char *path = argv[used][8] == '=' ? argv[used] + 9 : NULL;
        if (!path && used + 1 >= argc) {
            *rc = cli_usage_error(NULL, "--plugin needs a shared library: --plugin LIB");
            return -1;
        }
        if (!path)
            path = argv[++used];
        used++;
        byocl_error err;
        if (byocl_plugin_load(path, &err) != BYOCL_OK) {
            *rc = cli_fail_error(&err);
            return -1;
        }
    }
    return used;
}

static int run_main(int argc, char **argv)
{
    int rc = CLI_EXIT_OK;
    int used = load_plugins(argc - 1, argv + 1, &rc);
    if (used < 0)
        return rc;
    argc -= used;
    argv += used;
    if (argc < 2) {
        print_overview(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
        return help_command(0, NULL);
    if (strcmp(name, "--version") == 0) {
        printf("byocl %s\n", BYOCL_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "help") == 0)
        return help_command(argc - 2, argv + 2);
    if (name[0] == '-')
        return cli_usage_error(NULL, "unknown flag '%s' (flags go after the command)", name);
    const cli_command *cmd = find_command(name);
    if (!cmd)
        return cli_usage_error(NULL, "unknown command '%s'", name);
    return run_command(cmd, argc - 2, argv + 2);
}

int main(int argc, char **argv)
{
    /* Every line of stdout is written when it is printed, also into a pipe or a file: a
     * `built ...` line shows before the run that follows it, not when the process ends. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The built-in targets are registered like a plugin's, before any plugin. */
    byocl_error err;
    if (byocl_target_register_builtins(&err) != BYOCL_OK)
        return cli_fail_error(&err);
    /* A malformed BYOCL_MAX_*_BYTES is refused up front, not at the first tensor. */
    byocl_limits limits;
    if (byocl_limits_get(&limits, &err) != BYOCL_OK)
        return cli_fail_error(&err);
    if (cli_progress_check_env() != CLI_EXIT_OK)
        return CLI_EXIT_FAILURE;
    int rc = run_main(argc, argv);
    byocl_target_registry_reset(); /* before the plugins' code goes away */
    byocl_plugin_close_all();
    return rc;
}
