// Package dynamowire opens agentchat's DynamoDB store from the typed
// configuration. It is apart from package wire so that a process that
// serves SQLite (the local server of functions/local) does not link the
// AWS SDK, whose package initialisation and code are about 5.5 MiB of
// such a process's peak memory.
package dynamowire

import (
	"context"
	"fmt"
	"log/slog"

	"agentchat/internal/config"
	"agentchat/internal/store"
	"agentchat/internal/store/dynamo"
	"agentchat/internal/wire"
)

var _ wire.StoreOpener = Open

// Open opens the configured DynamoDB table, creating it when an emulator
// endpoint is configured (emulators start empty).
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
	st, err := dynamo.New(ctx, dynamo.Options{
		TableName: cfg.TableName,
		Endpoint:  cfg.DynamoDBEndpoint,
		Region:    cfg.AWSRegion,
		Logger:    log,
		Limits:    wire.Limits(cfg),
	})
	if err != nil {
		return nil, fmt.Errorf("open dynamodb table %s: %w", cfg.TableName, err)
	}
	if cfg.DynamoDBEndpoint != "" {
		if err := st.CreateTable(ctx); err != nil {
			return nil, fmt.Errorf("create dynamodb table %s: %w", cfg.TableName, err)
		}
	}
	return st, nil
}
