package dev.kaas.broker.data;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class FetchBudgetTest {
    static final int APACHE_FETCH_MAX_BYTES = 55 * 1024 * 1024;

    @Test
    void theBrokerLimitCapsARequestAskingForMore() {
        assertThat(FetchHandler.responseBudget((short) 12, Integer.MAX_VALUE, APACHE_FETCH_MAX_BYTES)).isEqualTo(57671680);
        assertThat(FetchHandler.responseBudget((short) 3, Integer.MAX_VALUE, APACHE_FETCH_MAX_BYTES)).isEqualTo(57671680);
    }

    @Test
    void aRequestAskingForLessGetsWhatItAskedFor() {
        assertThat(FetchHandler.responseBudget((short) 15, 1000, APACHE_FETCH_MAX_BYTES)).isEqualTo(1000);
    }

    @Test
    void beforeVersion3OnlyTheBrokerLimitApplies() {
        // v0-2 carry no max_bytes; the parsed field keeps whatever default it has.
        assertThat(FetchHandler.responseBudget((short) 2, 5, APACHE_FETCH_MAX_BYTES)).isEqualTo(APACHE_FETCH_MAX_BYTES);
        assertThat(FetchHandler.responseBudget((short) 0, Integer.MAX_VALUE, 4096)).isEqualTo(4096);
    }
}
