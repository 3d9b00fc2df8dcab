package provider

import (
	"context"
	"time"
)

// every calls fn every `period` until ctx ends (the first call one period from now).
func every(ctx context.Context, period time.Duration, fn func()) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fn()
		}
	}
}
