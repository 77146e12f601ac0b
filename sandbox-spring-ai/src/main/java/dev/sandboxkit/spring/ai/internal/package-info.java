/**
 * Implementation of the Spring AI adapter. Not an API: nothing here is supported for use outside sandboxkit, and
 * it changes without notice.
 */
package dev.sandboxkit.spring.ai.internal;
