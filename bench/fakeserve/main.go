// Command fakeserve serves internal/fakemodel on 127.0.0.1, answering every
// chat-completions request with the text "done", until it is interrupted:
// the fake model for timing whole processes from outside (a cached
// one-step `agenthost run` against bench/plainloop, bench/LOG.md) with
// any timer, /usr/bin/time or hyperfine. It prints the base URL and nothing
// else. -chunk-delay paces the answer (a pause before each of its
// chunks), for a model that is not instant: a run's background
// compilation then ends during its first request.
//
//	go run ./bench/fakeserve > /tmp/url &   # then OPENAI_BASE_URL=$(cat /tmp/url)
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/agenthost/agenthost/internal/fakemodel"
)

func main() {
	delay := flag.Duration("chunk-delay", 0, "pause before each chunk of the answer")
	flag.Parse()
	reply := fakemodel.Reply{Text: "done"}
	if *delay > 0 {
		reply.ChunkDelay = delay.String()
	}
	srv, err := fakemodel.StartFunc(func([]byte, http.Header) fakemodel.Reply {
		return reply
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeserve:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Close()
}
