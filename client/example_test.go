package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/simdex/simdex/client"
)

// Check an article before publishing, store it unless it duplicates
// something, and read a problem's kind. (Compile-only: it needs a server.)
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", client.WithAPIKey("a-key-of-16-chars-or-more"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.InsertDocument(ctx, client.InsertRequest{
		DocumentInput: client.DocumentInput{ID: "news/2026/11/23/1", Content: client.Content{Title: "...", Text: "..."}},
		Mode:          client.ModeInsertIfUnique,
	})
	var pe *client.Error
	switch {
	case errors.As(err, &pe):
		log.Fatalf("refused: %s (%s)", pe.Kind, pe.Detail)
	case err != nil:
		log.Fatal(err)
	case !res.Stored:
		fmt.Println("duplicate of", res.DuplicateOf)
	}
}
