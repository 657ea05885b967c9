/**
 * Who is on the other end of a connection: listener security protocols, TLS (Apache's
 * {@code ssl.*} settings through kafka-clients' own {@code SslFactory}, so keystores, truststores,
 * client authentication and principal mapping behave as in Apache 3.7) and the principal a
 * connection's requests carry. Depends on nothing else in the broker; the protocol package uses it.
 */
package dev.kaas.broker.auth;
