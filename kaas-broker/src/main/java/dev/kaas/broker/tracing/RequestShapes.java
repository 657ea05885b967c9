package dev.kaas.broker.tracing;

import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * What a request span says of its request and response: how many topics and partitions it names,
 * and the errors it answered. Read for sampled requests only, so the generic path (encode the
 * response and let kafka-clients count its errors) may cost a copy.
 */
final class RequestShapes {
    private RequestShapes() {
    }

    /** Topics and partitions a request names; a count is -1 where the request names none or "all" (Metadata). */
    record Counts(int topics, int partitions) {
        static final Counts NONE = new Counts(-1, -1);
    }

    static Counts counts(AbstractRequest request) {
        if (request == null) {
            return Counts.NONE;
        }
        Tally n = new Tally();
        Object data = request.data();
        if (data instanceof ProduceRequestData d) {
            d.topicData().forEach(t -> n.topic(t.partitionData().size()));
        } else if (data instanceof FetchRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof ListOffsetsRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof OffsetCommitRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof TxnOffsetCommitRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof DeleteRecordsRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof OffsetForLeaderEpochRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitions().size()));
        } else if (data instanceof DescribeProducersRequestData d) {
            d.topics().forEach(t -> n.topic(t.partitionIndexes().size()));
        } else if (data instanceof OffsetFetchRequestData d) {
            if ((d.topics() == null && d.groups().isEmpty()) || d.groups().stream().anyMatch(g -> g.topics() == null)) {
                // Every committed offset of a group (null topics), which the request does not count.
                return Counts.NONE;
            }
            if (d.topics() != null) {
                d.topics().forEach(t -> n.topic(t.partitionIndexes().size()));
            }
            d.groups().stream().filter(g -> g.topics() != null).flatMap(g -> g.topics().stream())
                    .forEach(t -> n.topic(t.partitionIndexes().size()));
        } else if (data instanceof AddPartitionsToTxnRequestData d) {
            d.v3AndBelowTopics().forEach(t -> n.topic(t.partitions().size()));
            d.transactions().forEach(txn -> txn.topics().forEach(t -> n.topic(t.partitions().size())));
        } else if (data instanceof WriteTxnMarkersRequestData d) {
            d.markers().forEach(m -> m.topics().forEach(t -> n.topic(t.partitionIndexes().size())));
        } else if (data instanceof MetadataRequestData d) {
            // Every topic, which the request does not count: null topics, or at v0 an empty list.
            boolean all = d.topics() == null || (request.version() == 0 && d.topics().isEmpty());
            return all ? Counts.NONE : new Counts(d.topics().size(), -1);
        } else {
            return Counts.NONE;
        }
        return new Counts(n.topics, n.partitions);
    }

    private static final class Tally {
        int topics;
        int partitions;

        void topic(int partitionsOfIt) {
            topics++;
            partitions += partitionsOfIt;
        }
    }

    /**
     * The errors a response carries, by error, NONE left out; null when they could not be read.
     * Produce and Fetch are read directly (a Fetch's records may be file slices that only the
     * socket writer can encode); any other response is encoded and counted by kafka-clients.
     */
    static Map<Errors, Integer> errors(ApiKeys key, short version, ApiMessage response) {
        Map<Errors, Integer> out = new TreeMap<>((a, b) -> Short.compare(a.code(), b.code()));
        if (response instanceof ProduceResponseData d) {
            for (var t : d.responses()) {
                for (var p : t.partitionResponses()) {
                    count(out, p.errorCode());
                }
            }
        } else if (response instanceof FetchResponseData d) {
            count(out, d.errorCode());
            for (var t : d.responses()) {
                for (var p : t.partitions()) {
                    count(out, p.errorCode());
                }
            }
        } else {
            try {
                AbstractResponse.parseResponse(key, MessageUtil.toByteBuffer(response, version), version).errorCounts()
                        .forEach((e, n) -> {
                            if (e != Errors.NONE) {
                                out.merge(e, n, Integer::sum);
                            }
                        });
            } catch (RuntimeException e) {
                return null;
            }
        }
        return out;
    }

    private static void count(Map<Errors, Integer> out, short code) {
        if (code != Errors.NONE.code()) {
            out.merge(Errors.forCode(code), 1, Integer::sum);
        }
    }

    /** The error a span is labelled with: the most frequent one (the lowest code among equals), else NONE. */
    static Errors main(Map<Errors, Integer> errors) {
        Errors main = Errors.NONE;
        int most = 0;
        for (Map.Entry<Errors, Integer> e : errors.entrySet()) {
            if (e.getValue() > most) {
                main = e.getKey();
                most = e.getValue();
            }
        }
        return main;
    }
}
