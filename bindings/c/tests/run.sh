#!/usr/bin/env bash
# Placeholder until the C test suite lands: compiles the header as C99 and C++.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
echo 'int main(void){return 0;}' | cat "$root/include/acp_engine.h" - > /tmp/acp_header_check.c
gcc -std=c99 -Wall -Wextra -Werror -fsyntax-only /tmp/acp_header_check.c
g++ -x c++ -Wall -Wextra -Werror -fsyntax-only /tmp/acp_header_check.c
echo "1 passed, 0 failed"
