#!/usr/bin/env bash
# What the 3.7.2 distribution's bin/kafka-server-start.sh adds before kafka-run-class.sh: the
# broker's log4j configuration, a 1 GiB heap, and GC logging. Usage: server-start.sh server.properties
set -eu
base_dir="$(cd "$(dirname "$0")/.." && pwd)"
export KAFKA_LOG4J_OPTS="${KAFKA_LOG4J_OPTS:--Dlog4j.configuration=file:$base_dir/config/log4j.properties}"
export KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
exec "$base_dir/bin/run-class.sh" -name kafkaServer -loggc kafka.Kafka "$@"
