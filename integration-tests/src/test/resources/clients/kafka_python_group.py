"""kafka-python against kaas: produce, consume in a group with commits, rejoin and resume."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]

producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
for i in range(20):
    producer.send(topic, key=b"k%d" % i, value=b"v%d" % i)
producer.flush()
producer.close()


def consume(expected):
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=20000, session_timeout_ms=10000)
    seen = []
    for message in consumer:
        seen.append(message.value.decode())
        if len(seen) == expected:
            break
    consumer.commit()
    committed = consumer.committed(TopicPartition(topic, 0))
    consumer.close()
    return seen, committed


first, committed = consume(10)
assert first == ["v%d" % i for i in range(10)], first
assert committed == 10, committed
second, committed = consume(10)
assert second == ["v%d" % i for i in range(10, 20)], second
assert committed == 20, committed
print("kafka-python ok")
