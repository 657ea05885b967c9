#!/usr/bin/env bash
# The command the Apache Kafka 3.7.2 distribution's bin/kafka-run-class.sh builds with no KAFKA_*
# variables set, written out plainly: the side-by-side benchmark's check (SideBySide --check-apache)
# starts Apache through these scripts from a clean environment and compares it with the harness's
# own launch. Usage: run-class.sh [-name NAME -loggc] CLASS [ARGS...]
set -eu
base_dir="$(cd "$(dirname "$0")/.." && pwd)"
LOG_DIR="${LOG_DIR:-$base_dir/logs}"
if [ -n "${JAVA_HOME:-}" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

# Every jar of libs/ in glob (name) order, as the distribution's loop adds them.
CLASSPATH=""
for f in "$base_dir"/libs/*.jar; do CLASSPATH="$CLASSPATH:$f"; done
CLASSPATH="${CLASSPATH#:}"

KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx256M}"
KAFKA_JVM_PERFORMANCE_OPTS="${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true}"
KAFKA_JMX_OPTS="-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
if [ -z "${KAFKA_LOG4J_OPTS:-}" ]; then
  KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:$base_dir/config/tools-log4j.properties"
else
  mkdir -p "$LOG_DIR"
fi
KAFKA_LOG4J_OPTS="-Dkafka.logs.dir=$LOG_DIR $KAFKA_LOG4J_OPTS"

KAFKA_GC_LOG_OPTS=""
NAME=""
while [ $# -gt 0 ]; do
  case "$1" in
    -name) NAME="$2"; shift 2 ;;
    -loggc) KAFKA_GC_LOG_OPTS="-Xlog:gc*:file=$LOG_DIR/$NAME-gc.log:time,tags:filecount=10,filesize=100M"; shift ;;
    *) break ;;
  esac
done

# Word splitting of the option variables is wanted, as in the distribution's script.
# shellcheck disable=SC2086
exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS -cp "$CLASSPATH" ${KAFKA_OPTS:-} "$@"
