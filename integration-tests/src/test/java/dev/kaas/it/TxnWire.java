package dev.kaas.it;

import java.io.IOException;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;

/**
 * A transactional producer's requests one at a time over a {@link RawClient}, so a test can send
 * what a well-behaved client never would (a write before AddPartitionsToTxn, a write after its
 * transaction ended) and see each answer.
 */
final class TxnWire {
    final String transactionalId;
    long producerId;
    short epoch;
    private int sequence;

    private TxnWire(String transactionalId) {
        this.transactionalId = transactionalId;
    }

    /** InitProducerId for {@code transactionalId} at its coordinator. */
    static TxnWire init(RawClient coordinator, String transactionalId) throws IOException {
        TxnWire w = new TxnWire(transactionalId);
        var r = (InitProducerIdResponse) coordinator.send(ApiKeys.INIT_PRODUCER_ID, (short) 4, new InitProducerIdRequestData()
                .setTransactionalId(transactionalId).setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short) -1));
        if (r.error() != Errors.NONE) {
            throw new IllegalStateException("InitProducerId: " + r.error());
        }
        w.producerId = r.data().producerId();
        w.epoch = r.data().producerEpoch();
        return w;
    }

    Errors addPartition(RawClient coordinator, TopicPartition tp) throws IOException {
        var topics = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(tp.topic()).setPartitions(List.of(tp.partition())));
        var r = (AddPartitionsToTxnResponse) coordinator.send(ApiKeys.ADD_PARTITIONS_TO_TXN, (short) 3, new AddPartitionsToTxnRequestData()
                .setV3AndBelowTransactionalId(transactionalId).setV3AndBelowProducerId(producerId).setV3AndBelowProducerEpoch(epoch)
                .setV3AndBelowTopics(topics));
        return r.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID).get(tp);
    }

    Errors addOffsets(RawClient coordinator, String groupId) throws IOException {
        var r = (AddOffsetsToTxnResponse) coordinator.send(ApiKeys.ADD_OFFSETS_TO_TXN, (short) 3, new AddOffsetsToTxnRequestData()
                .setTransactionalId(transactionalId).setProducerId(producerId).setProducerEpoch(epoch).setGroupId(groupId));
        return Errors.forCode(r.data().errorCode());
    }

    Errors endTxn(RawClient coordinator, boolean commit) throws IOException {
        var r = (EndTxnResponse) coordinator.send(ApiKeys.END_TXN, (short) 3, new EndTxnRequestData()
                .setTransactionalId(transactionalId).setProducerId(producerId).setProducerEpoch(epoch).setCommitted(commit));
        return r.error();
    }

    /** A transactional batch of one record, sent as {@code asId} (null: no transactional id) with this producer's id and {@code epoch}. */
    Errors produce(RawClient leader, TopicPartition tp, String asId, short epoch, String value) throws IOException {
        MemoryRecords records = MemoryRecords.withTransactionalRecords(CompressionType.NONE, producerId, epoch, sequence,
                new SimpleRecord(System.currentTimeMillis(), "k".getBytes(), value.getBytes()));
        var topicData = new ProduceRequestData.TopicProduceDataCollection();
        topicData.add(new ProduceRequestData.TopicProduceData().setName(tp.topic()).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(tp.partition()).setRecords(records))));
        var r = (ProduceResponse) leader.send(ApiKeys.PRODUCE, (short) 9, new ProduceRequestData()
                .setTransactionalId(asId).setAcks((short) -1).setTimeoutMs(30_000).setTopicData(topicData));
        Errors e = Errors.forCode(r.data().responses().find(tp.topic()).partitionResponses().get(0).errorCode());
        if (e == Errors.NONE) {
            sequence++;
        }
        return e;
    }

    Errors produce(RawClient leader, TopicPartition tp, String value) throws IOException {
        return produce(leader, tp, transactionalId, epoch, value);
    }

    Errors commitOffset(RawClient groupCoordinator, String groupId, TopicPartition tp, long offset) throws IOException {
        var r = (TxnOffsetCommitResponse) groupCoordinator.send(ApiKeys.TXN_OFFSET_COMMIT, (short) 3, new TxnOffsetCommitRequestData()
                .setTransactionalId(transactionalId).setGroupId(groupId).setProducerId(producerId).setProducerEpoch(epoch)
                .setGenerationId(-1).setMemberId("").setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic()
                        .setName(tp.topic()).setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                .setPartitionIndex(tp.partition()).setCommittedOffset(offset))))));
        return r.errors().get(tp);
    }
}
