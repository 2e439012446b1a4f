/* A complete agenthost/1 plugin in C: one tool, "greeting", that returns the
 * first line of /workspace/greeting.txt. wasi-libc resolves absolute paths
 * against the preopened mounts, so fopen works as on any POSIX system.
 *
 * Debian/Ubuntu (clang 14):  apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32
 *   clang --target=wasm32-wasi -O2 -o greeting.wasm greeting.c
 * wasi-sdk 22 or later:
 *   $WASI_SDK_PATH/bin/clang --target=wasm32-wasip1 -O2 -o greeting.wasm greeting.c
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *manifest =
    "{\"protocol\":\"agenthost/1\",\"name\":\"greeting\",\"version\":\"0.1.0\","
    "\"tools\":[{\"name\":\"greeting\",\"description\":\"Return the first line of greeting.txt in the workspace.\","
    "\"input_schema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}}],"
    "\"requests\":{\"fs\":[{\"guest\":\"/workspace\",\"access\":\"ro\",\"reason\":\"read greeting.txt\"}]}}";

/* reply writes one result with text JSON-escaped and returns the exit code. */
static int reply(const char *text, int is_error) {
    fputs("{\"content\":[{\"type\":\"text\",\"text\":\"", stdout);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            printf("\\%c", *p);
        } else if (*p < 0x20) {
            printf("\\u%04x", *p);
        } else {
            putchar(*p);
        }
    }
    printf("\"}],\"is_error\":%s}\n", is_error ? "true" : "false");
    return is_error ? 1 : 0;
}

int main(void) {
    const char *mode = getenv("AGENTHOST_MODE");
    if (mode && strcmp(mode, "describe") == 0) {
        fputs(manifest, stdout);
        return 0;
    }
    if (!mode || strcmp(mode, "call") != 0) {
        fputs("AGENTHOST_MODE must be describe or call\n", stderr);
        return 2;
    }
    /* Read the whole request; a real tool parses it (e.g. with cJSON). */
    char buf[4096];
    while (fread(buf, 1, sizeof buf, stdin) > 0) {
    }
    FILE *f = fopen("/workspace/greeting.txt", "r");
    if (!f) {
        char msg[256];
        /* Without the mount, wasi-libc says "Capabilities insufficient". */
        snprintf(msg, sizeof msg, "greeting.txt: %s (is /workspace mounted?)", strerror(errno));
        return reply(msg, 1);
    }
    char line[1024] = "";
    if (!fgets(line, sizeof line, f)) {
        line[0] = '\0';
    }
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    return reply(line, 0);
}
