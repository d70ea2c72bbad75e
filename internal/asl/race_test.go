//go:build race

package asl

const raceEnabled = true
