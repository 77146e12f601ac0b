package dev.sandboxkit.readme;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The README's Spring Boot example as an application: its {@code Assistant}, its properties, its dependencies, and a
 * {@link StandInChatModel} where a model starter would supply the {@link ChatModel}. {@link #main} has two
 * conversations: what one writes, the other does not see.
 */
@SpringBootApplication
public class ReadmeApplication {

    /** Created by Spring. */
    public ReadmeApplication() {
    }

    /**
     * The model, which a Spring AI model starter supplies in a real application.
     *
     * @return the stand-in
     */
    @Bean
    public ChatModel chatModel() {
        return new StandInChatModel();
    }

    /**
     * Starts the application, has three turns in two conversations, prints them, and closes the application.
     *
     * @param args Spring Boot arguments, for example {@code --sandboxkit.spec.image=python:3.12-slim}
     */
    public static void main(String[] args) {
        try (ConfigurableApplicationContext context = SpringApplication.run(ReadmeApplication.class, args)) {
            Assistant assistant = context.getBean(Assistant.class);
            String[][] turns = {{"alice", "remember the build is green"}, {"bob", "recall"}, {"alice", "recall"}};
            for (String[] turn : turns) {
                System.out.println(turn[0] + "> " + turn[1]);
                System.out.println("assistant> " + assistant.ask(turn[0], turn[1]));
            }
        }
    }
}
