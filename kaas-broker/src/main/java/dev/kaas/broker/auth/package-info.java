/**
 * Who is on the other end of a connection: listener security protocols, TLS (Apache's
 * {@code ssl.*} settings through kafka-clients' own {@code SslFactory}, so keystores, truststores,
 * client authentication and principal mapping behave as in Apache 3.7), the principal a
 * connection's requests carry, and what that principal may do (the ACL decision, Apache's
 * StandardAuthorizer's, and the {@code Access} handlers ask). Depends on nothing else in the
 * broker; the protocol package uses it, and the admin package feeds it the published ACLs.
 */
package dev.kaas.broker.auth;
