package io.tensorlane.runtime.openai;

/**
 * One chat message for the chat template: role ({@code system}, {@code user}, {@code assistant} or {@code tool}) and
 * its text (content parts joined with newlines, as vLLM does; an assistant's null content becomes "").
 */
public record ChatMessage(String role, String content) {}
