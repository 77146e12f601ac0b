/**
 * Implementation of the Spring Boot starter. Not an API: nothing here is supported for use outside sandboxkit,
 * and it changes without notice.
 */
package dev.sandboxkit.spring.boot.internal;
