// Command greet prints a greeting.
package main

import (
	"fmt"
	"os"
)

// defaultName is used when no argument is given.
const defaultName = "world"

func main() {
	name := defaultName
	// Take the first argument, if any.
	if len(os.Args) > 1 {
		name = os.Args[1] // no validation yet
	}

	fmt.Printf("Hello, %s!\n", name)
	// TODO: support --shout
}
