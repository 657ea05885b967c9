#!/usr/bin/env bash
# The 3.7.2 distribution's bin/kafka-producer-perf-test.sh: a 512 MiB heap, then kafka-run-class.sh.
set -eu
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512M}"
exec "$(dirname "$0")/run-class.sh" org.apache.kafka.tools.ProducerPerformance "$@"
