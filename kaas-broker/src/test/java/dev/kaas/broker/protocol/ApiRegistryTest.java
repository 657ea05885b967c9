package dev.kaas.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Collectors;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

/**
 * The handler registry is the single source of truth: ApiVersions advertises it, the codec
 * handles every version it claims, and src/docs/compatibility.md lists exactly it.
 */
@QuarkusTest
class ApiRegistryTest {
    static final Path COMPATIBILITY_PAGE = Path.of("..", "src", "docs", "compatibility.md");
    static final String BEGIN = "<!-- served-apis:begin -->";
    static final String END = "<!-- served-apis:end -->";

    @Inject
    ApiRegistry registry;

    @Test
    void everyServedApiUsesApacheVersionRanges() {
        for (ApiHandler h : registry.handlers()) {
            assertThat(h.minVersion()).as("%s min", h.key()).isGreaterThanOrEqualTo(h.key().oldestVersion());
            assertThat(h.maxVersion()).as("%s max", h.key()).isLessThanOrEqualTo(h.key().latestVersion(false));
        }
        assertThat(registry.apiVersions()).hasSize(registry.handlers().size());
    }

    @Test
    void everyServedApiRoundTripsAtEveryVersion() {
        for (ApiHandler h : registry.handlers()) {
            ApiKeys key = h.key();
            for (short v = h.minVersion(); v <= h.maxVersion(); v++) {
                ApiMessage request = ApiMessageType.fromApiKey(key.id).newRequest();
                if (request instanceof org.apache.kafka.common.message.DescribeAclsRequestData acls) {
                    // Its defaults (code 0, UNKNOWN) are what Apache's request refuses to parse: ask for any ACL.
                    acls.setResourceTypeFilter((byte) 1).setOperation((byte) 1).setPermissionType((byte) 1);
                }
                RequestHeader header = new RequestHeader(key, v, "codec-test", 42);
                ByteBuffer frame = serialize(header, request, v);
                RequestHeader parsedHeader = RequestHeader.parse(frame);
                assertThat(parsedHeader.correlationId()).isEqualTo(42);
                AbstractRequest parsed = AbstractRequest.parseRequest(key, v, frame).request;
                // Byte equality: parsing may normalise fields a version lacks (JoinGroup v0's rebalance timeout).
                assertThat(serialize(header, parsed.data(), v)).as("%s v%d request", key, v).isEqualTo(serialize(header, request, v));
                assertThat(frame.hasRemaining()).as("%s v%d request fully consumed", key, v).isFalse();

                ApiMessage response = ApiMessageType.fromApiKey(key.id).newResponse();
                ByteBuffer out = HeapFrames.joined(key, v, 42, response);
                assertThat(out.getInt()).isEqualTo(out.remaining());
                AbstractResponse back = AbstractResponse.parseResponse(out, header);
                assertThat(out.hasRemaining()).as("%s v%d response fully consumed", key, v).isFalse();
                // Parsing normalises some defaults (JoinGroup's protocol name); after that, encode and parse are inverse.
                ByteBuffer again = HeapFrames.joined(key, v, 42, back.data());
                again.getInt();
                assertThat(AbstractResponse.parseResponse(again, header).data()).as("%s v%d response", key, v).isEqualTo(back.data());
            }
        }
    }

    /**
     * Every count and length a served request carries, set to the largest a field can say
     * (0x7fffffff as int32 and as a varint, 0x7fff as int16), at every offset of the request as a
     * client encodes it: parsing must refuse or bound it before allocating for it. The parser is
     * kafka-clients' (it checks each count against the bytes left); this holds it to that for
     * every version we serve, measuring what each parse allocates.
     */
    @Test
    void everyServedRequestWithHugeCountsIsRefusedBeforeItAllocatesForThem() {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long bound = 256 * 1024;
        // The instrument itself: a parse that did allocate what a count asked for would be seen.
        long before = threads.getCurrentThreadAllocatedBytes();
        byte[] sink = new byte[4 * 1024 * 1024];
        assertThat(threads.getCurrentThreadAllocatedBytes() - before).isGreaterThan(bound + sink.length / 2);
        int variants = 0;
        for (ApiHandler h : registry.handlers()) {
            ApiKeys key = h.key();
            for (short v = h.minVersion(); v <= h.maxVersion(); v++) {
                ApiMessage request = ApiMessageType.fromApiKey(key.id).newRequest();
                ObjectSerializationCache cache = new ObjectSerializationCache();
                ByteBuffer clean = ByteBuffer.allocate(request.size(cache, v));
                request.write(new ByteBufferAccessor(clean), cache, v);
                byte[] body = clean.array();
                for (int at = 0; at < body.length; at++) {
                    for (byte[] huge : new byte[][] {{0x7f, -1, -1, -1}, {-1, -1, -1, -1, 0x07}, {0x7f, -1}}) {
                        byte[] hostile = java.util.Arrays.copyOf(body, Math.max(body.length, at + huge.length));
                        System.arraycopy(huge, 0, hostile, at, huge.length);
                        long start = threads.getCurrentThreadAllocatedBytes();
                        try {
                            AbstractRequest.parseRequest(key, v, ByteBuffer.wrap(hostile));
                        } catch (RuntimeException refused) {
                            // What the pipeline closes the connection for.
                        }
                        assertThat(threads.getCurrentThreadAllocatedBytes() - start)
                                .as("%s v%d with %d-byte count at offset %d", key, v, huge.length, at).isLessThan(bound);
                        variants++;
                    }
                }
            }
        }
        assertThat(variants).isGreaterThan(1000);
    }

    @Test
    void theCompatibilityPageListsExactlyTheServedApis() throws Exception {
        String page = Files.readString(COMPATIBILITY_PAGE, StandardCharsets.UTF_8);
        int from = page.indexOf(BEGIN);
        int to = page.indexOf(END);
        assertThat(from).as("markers in %s", COMPATIBILITY_PAGE).isNotNegative();
        String documented = page.substring(from + BEGIN.length(), to).trim();
        assertThat(documented).as("regenerate the table in %s", COMPATIBILITY_PAGE).isEqualTo(table(registry));
    }

    /** The table the compatibility page must contain between its markers. */
    static String table(ApiRegistry registry) {
        String rows = registry.handlers().stream().sorted(Comparator.comparingInt(h -> h.key().id))
                .map(h -> "| " + h.key().name + " | " + h.key().id + " | " + h.minVersion() + "–" + h.maxVersion() + " |")
                .collect(Collectors.joining("\n"));
        return "| API | key | versions |\n|---|---|---|\n" + rows;
    }

    private static ByteBuffer serialize(RequestHeader header, ApiMessage body, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int hs = header.data().size(cache, header.headerVersion());
        int bs = body.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(hs + bs);
        ByteBufferAccessor acc = new ByteBufferAccessor(buf);
        header.data().write(acc, cache, header.headerVersion());
        body.write(acc, cache, version);
        buf.flip();
        return buf;
    }
}
