package org.harvester.shim.common;

/** A document from the sidecar that does not follow its schema; the message names the field. */
public final class AdviceFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public AdviceFormatException(String message) {
    super(message);
  }
}
