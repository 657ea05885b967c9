package dev.kaas.broker.admin;

import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import org.apache.kafka.common.config.LogLevelConfig;

/**
 * The BROKER_LOGGER resource: this broker's loggers and their levels, read and changed at run
 * time as Apache's {@code Log4jController} does for log4j, here on the JBoss LogManager Quarkus
 * installs behind {@code java.util.logging}. Names are logger names; Apache's {@code root} is the
 * root logger. Levels are Apache's names (TRACE … FATAL); a logger without a level of its own
 * reports its effective one. Changes last until the process stops, as in Apache.
 */
public final class BrokerLoggers {
    public static final String ROOT = "root";
    /** Apache's valid levels, sorted, as its error message lists them. */
    static final String VALID_LEVELS = String.join(", ", new java.util.TreeSet<>(LogLevelConfig.VALID_LOG_LEVELS));

    private BrokerLoggers() {
    }

    /** Every logger that exists, with its effective level (Apache's {@code Log4jController.loggers}). */
    public static Map<String, String> loggers() {
        Map<String, String> out = new TreeMap<>();
        for (String name : Collections.list(LogManager.getLogManager().getLoggerNames())) {
            Logger l = existing(name);
            if (l != null) {
                out.put(name.isEmpty() ? ROOT : name, apacheName(effective(l)));
            }
        }
        out.putIfAbsent(ROOT, apacheName(effective(Logger.getLogger(""))));
        return out;
    }

    public static boolean exists(String name) {
        return ROOT.equals(name) || existing(name) != null;
    }

    /**
     * The logger of that name if something created it, else null. JBoss's {@code getLogger}
     * creates what it is asked for, so asking it would make every name exist (and add it to the
     * list for good).
     */
    private static Logger existing(String name) {
        if (LogManager.getLogManager() instanceof org.jboss.logmanager.LogManager) {
            return org.jboss.logmanager.LogContext.getLogContext().getLoggerIfExists(name);
        }
        return LogManager.getLogManager().getLogger(name);
    }

    /** @return null when {@code level} is one of Apache's, else Apache's message */
    public static String checkLevel(String name, String level) {
        if (level == null || !LogLevelConfig.VALID_LOG_LEVELS.contains(level)) {
            return "Cannot set the log level of " + name + " to " + level + " as it is not a supported log level. "
                    + "Valid log levels are " + VALID_LEVELS;
        }
        return null;
    }

    public static void set(String name, String level) {
        logger(name).setLevel(org.jboss.logmanager.Level.parse(level.toUpperCase(Locale.ROOT)));
    }

    /** The logger goes back to inheriting its parent's level. */
    public static void unset(String name) {
        logger(name).setLevel(null);
    }

    private static Logger logger(String name) {
        return Logger.getLogger(ROOT.equals(name) ? "" : name);
    }

    private static Level effective(Logger l) {
        for (Logger at = l; at != null; at = at.getParent()) {
            if (at.getLevel() != null) {
                return at.getLevel();
            }
        }
        return Level.INFO;
    }

    /** Apache's name for a level: JBoss's own names, and the java.util.logging ones mapped onto them. */
    static String apacheName(Level level) {
        int v = level.intValue();
        if (v >= org.jboss.logmanager.Level.FATAL.intValue()) {
            return v == Level.OFF.intValue() ? "OFF" : "FATAL";
        }
        if (v >= org.jboss.logmanager.Level.ERROR.intValue()) {
            return "ERROR";
        }
        if (v >= org.jboss.logmanager.Level.WARN.intValue()) {
            return "WARN";
        }
        if (v >= org.jboss.logmanager.Level.INFO.intValue()) {
            return "INFO";
        }
        if (v >= org.jboss.logmanager.Level.DEBUG.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

}
