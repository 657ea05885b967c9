package dev.kaas.broker.txn;

import java.io.IOException;
import java.util.Collection;

/**
 * Where a transaction slot's state lives. The file binding is {@link TxnFiles}; tests use memory.
 * {@code save} returns only once the whole slot state is durable and the slot still ours.
 */
public interface TxnStore {
    /** The state of the newest slot file at or below this owner's epoch. */
    Collection<TxnMetadata> load() throws IOException;

    /** @throws org.apache.kafka.common.errors.NotCoordinatorException when the slot was taken over */
    void save(Collection<TxnMetadata> all) throws IOException;

    /** The slot is let go: release what the store holds open (the file binding's journal). */
    void close();
}
