package dev.kaas.common.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Disk} that can lose power. It keeps, per file, the bytes as of the last completed
 * {@code force} of a channel on it, and per directory, the names as of the last directory fsync.
 * {@link #powerLoss()} rewrites every directory it has seen to exactly that durable state: a file
 * whose create or rename was never followed by a directory fsync is gone (or back under its old
 * name), and a file holds only the bytes its last force covered. Channels opened before the loss
 * fail on any later write or force, as a dead machine's would.
 *
 * <p>Files that exist when the disk first sees their directory count as durable. Only what goes
 * through this disk is modelled; a test that writes around it gets no protection from it.
 */
public final class PowerLossDisk implements Disk {
    /** A file's identity, independent of its name: what a rename moves. */
    private static final class Inode {
        byte[] durable = new byte[0];
    }

    private final Map<Path, Map<String, Inode>> names = new HashMap<>();
    private final Map<Path, Map<String, Inode>> durableNames = new HashMap<>();
    private final Set<LossyChannel> open = new HashSet<>();
    private final List<String> forced = new ArrayList<>();
    private final AtomicLong generation = new AtomicLong();
    private int stepsUntilLoss = -1;
    private volatile java.util.function.Consumer<String> beforeForce = name -> { };

    /** Runs {@code hook} with the file's name at the start of every force: lets a test act "during" an fsync. */
    public void beforeForce(java.util.function.Consumer<String> hook) {
        this.beforeForce = hook;
    }

    /**
     * Arms a power loss: the {@code steps}+1-th durable-state operation from now (open, write,
     * truncate, force, move, delete, directory fsync) does not happen; the power goes instead and
     * it throws. Lets a test cut a multi-step write between any two of its steps.
     */
    public synchronized void losePowerAfter(int steps) {
        stepsUntilLoss = steps;
    }

    /** A write a test cuts with a power loss. */
    @FunctionalInterface
    public interface Write {
        void run() throws Exception;
    }

    /**
     * Runs {@code write} with a power loss armed {@code steps} durable-state operations ahead
     * (see {@link #losePowerAfter}); when the write finishes first, the power goes right after it.
     *
     * @return true when the write returned (so everything it wrote must survive)
     */
    public boolean cutAfter(int steps, Write write) throws IOException {
        losePowerAfter(steps);
        boolean returned;
        try {
            write.run();
            returned = true;
        } catch (Exception e) {
            returned = false;
        }
        if (!lostPower()) {
            stepsUntilLossDisarm();
            powerLoss();
        }
        return returned;
    }

    private synchronized void stepsUntilLossDisarm() {
        stepsUntilLoss = -1;
    }

    /** True once an armed loss has happened (and not re-armed since). */
    public synchronized boolean lostPower() {
        return stepsUntilLoss == -2;
    }

    private synchronized void step() throws IOException {
        if (stepsUntilLoss < 0) {
            return;
        }
        if (stepsUntilLoss == 0) {
            stepsUntilLoss = -2;
            powerLoss();
            throw new IOException("power lost");
        }
        stepsUntilLoss--;
    }

    @Override
    public synchronized FileChannel open(Path file, OpenOption... options) throws IOException {
        step();
        Path dir = dirOf(file);
        Map<String, Inode> entries = track(dir);
        String name = file.getFileName().toString();
        // The model reads back what a force covered, so the real channel must be readable too.
        // (READ cannot go with APPEND: the wrapper appends itself.)
        Set<OpenOption> opts = new HashSet<>(List.of(options));
        boolean append = opts.remove(java.nio.file.StandardOpenOption.APPEND);
        if (append) {
            opts.add(java.nio.file.StandardOpenOption.WRITE);
        }
        opts.add(java.nio.file.StandardOpenOption.READ);
        FileChannel real = FileChannel.open(file, opts);
        Inode inode = entries.computeIfAbsent(name, n -> new Inode());
        LossyChannel ch = new LossyChannel(real, inode, name, generation.get(), append);
        open.add(ch);
        return ch;
    }

    @Override
    public synchronized void move(Path from, Path to) throws IOException {
        step();
        Disk.SYSTEM.move(from, to);
        Map<String, Inode> src = track(dirOf(from));
        Map<String, Inode> dst = track(dirOf(to));
        Inode inode = src.remove(from.getFileName().toString());
        if (inode != null) {
            dst.put(to.getFileName().toString(), inode);
        }
    }

    @Override
    public synchronized void delete(Path file) throws IOException {
        step();
        Files.deleteIfExists(file);
        track(dirOf(file)).remove(file.getFileName().toString());
    }

    @Override
    public synchronized void fsyncDirectory(Path dir) {
        Path d = dir.toAbsolutePath().normalize();
        try {
            step();
            durableNames.put(d, new HashMap<>(track(d)));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The power goes and comes back: every directory this disk has seen holds exactly its durable
     * names, each with its durable bytes; every channel opened before is dead.
     */
    public synchronized void powerLoss() throws IOException {
        generation.incrementAndGet();
        for (LossyChannel ch : open) {
            ch.real.close();
        }
        open.clear();
        for (var e : names.entrySet()) {
            Path dir = e.getKey();
            Map<String, Inode> durable = durableNames.getOrDefault(dir, Map.of());
            for (String name : e.getValue().keySet()) {
                Files.deleteIfExists(dir.resolve(name));
            }
            if (!durable.isEmpty()) {
                Files.createDirectories(dir);
            }
            for (var d : durable.entrySet()) {
                Files.write(dir.resolve(d.getKey()), d.getValue().durable);
            }
            e.setValue(new HashMap<>(durable));
        }
    }

    /** How many forces completed on files whose name ends with {@code suffix}. */
    public synchronized long forces(String suffix) {
        return forced.stream().filter(n -> n.endsWith(suffix)).count();
    }

    private synchronized void forcedOn(String name) {
        forced.add(name);
    }

    private synchronized boolean alive(long gen) {
        return gen == generation.get();
    }

    private static Path dirOf(Path file) {
        return file.toAbsolutePath().normalize().getParent();
    }

    private Map<String, Inode> track(Path dir) throws IOException {
        Map<String, Inode> entries = names.get(dir);
        if (entries != null) {
            return entries;
        }
        entries = new HashMap<>();
        if (Files.isDirectory(dir)) {
            try (var list = Files.list(dir)) {
                for (Path p : (Iterable<Path>) list::iterator) {
                    if (Files.isRegularFile(p)) {
                        Inode inode = new Inode();
                        inode.durable = Files.readAllBytes(p);
                        entries.put(p.getFileName().toString(), inode);
                    }
                }
            }
        }
        names.put(dir, entries);
        durableNames.put(dir, new HashMap<>(entries));
        return entries;
    }

    private final class LossyChannel extends ForwardingFileChannel {
        private final Inode inode;
        private final String name;
        private final long gen;
        private final boolean append;

        LossyChannel(FileChannel real, Inode inode, String name, long gen, boolean append) {
            super(real);
            this.append = append;
            this.inode = inode;
            this.name = name;
            this.gen = gen;
        }

        private void checkAlive() throws IOException {
            if (!alive(gen)) {
                throw new IOException("power lost: " + name);
            }
            step();
            if (!alive(gen)) {
                throw new IOException("power lost: " + name);
            }
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            checkAlive();
            if (append) {
                real.position(real.size());
            }
            return real.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            checkAlive();
            if (append) {
                real.position(real.size());
            }
            return real.write(srcs, offset, length);
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            checkAlive();
            real.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            beforeForce.accept(name);
            synchronized (PowerLossDisk.this) {
                checkAlive();
                // No real fsync: the model keeps the durable bytes itself (read back below), and the
                // page cache already serves them to this process, so a real one only costs time.
                ByteBuffer all = ByteBuffer.allocate((int) real.size());
                long p = 0;
                while (all.hasRemaining()) {
                    int n = real.read(all, p);
                    if (n < 0) {
                        break;
                    }
                    p += n;
                }
                inode.durable = java.util.Arrays.copyOf(all.array(), all.position());
                forcedOn(name);
            }
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            checkAlive();
            return real.transferFrom(src, position, count);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            checkAlive();
            return real.write(src, position);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            throw new UnsupportedOperationException("mapped writes would bypass the power-loss model");
        }

        @Override
        protected void implCloseChannel() throws IOException {
            real.close();
            synchronized (PowerLossDisk.this) {
                open.remove(this);
            }
        }
    }
}
