//go:build !race

package asl

const raceEnabled = false
