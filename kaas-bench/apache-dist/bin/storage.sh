#!/usr/bin/env bash
# The 3.7.2 distribution's bin/kafka-storage.sh: kafka-run-class.sh with its default heap.
set -eu
exec "$(dirname "$0")/run-class.sh" kafka.tools.StorageTool "$@"
