package dev.kaas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompactionBenchTest {

    private static List<Double> oneTo(int n) {
        List<Double> values = new ArrayList<>();
        for (int i = n; i >= 1; i--) {
            values.add((double) i);
        }
        Collections.shuffle(values, new java.util.Random(7));
        return values;
    }

    @Test
    void theMediansIntervalUsesTheBinomialRanks() {
        // Published ranks of the distribution-free 95 % interval: n=18 -> 5th and 14th, n=30 -> 10th and 21st,
        // n=6 -> 1st and 6th (the whole range: P(B=0) = 1/64 is the only tail within 2.5 %).
        assertThat(CompactionBench.medianWithInterval(oneTo(18))).containsExactly(9.5, 5.0, 14.0);
        assertThat(CompactionBench.medianWithInterval(oneTo(30))).containsExactly(15.5, 10.0, 21.0);
        assertThat(CompactionBench.medianWithInterval(oneTo(6))).containsExactly(3.5, 1.0, 6.0);
        assertThat(CompactionBench.medianWithInterval(oneTo(5))).containsExactly(3.0, 1.0, 5.0);
    }
}
