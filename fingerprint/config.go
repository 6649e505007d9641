package fingerprint

import (
	"errors"
	"fmt"
)

// ErrBadConfig is returned (wrapped) by Config.Validate and New for an
// unusable configuration.
var ErrBadConfig = errors.New("fingerprint: bad config")

// Config tunes a Fingerprinter. Start from DefaultConfig; the zero value is
// not valid. Fingerprints are only comparable between Fingerprinters with the
// same Config and the same RecipeVersion: an index must store and check both.
type Config struct {
	// MinFeatures is the smallest number of distinct content words (unigram
	// features) a body needs for a simhash of its features; fewer makes a
	// low-information document (Result.LowInformation). Default 3.
	MinFeatures int
	// TitleBoost multiplies the weight of body features that also occur in
	// the title (1 disables it). Title-only features never enter the body
	// simhash, so the same body under a new headline stays a near-duplicate.
	// Default 1 (off since recipe 2): on the quality benchmark a boost moved
	// the body fingerprint of retitled copies (title recall 0.83 with 1.5,
	// 0.94 without) and bought nothing elsewhere.
	TitleBoost float64
	// LeadBoost multiplies the weight of features that occur in the lead of
	// the body (1 disables it). Default 1.25.
	LeadBoost float64
	// LeadChars is the size of the lead in characters of kept content words:
	// it is counted after stop words, numbers and punctuation are dropped, so
	// edits to those do not move the boundary. 0 disables the lead boost.
	// Default 200.
	LeadChars int
	// BigramWeight scales word-bigram features (pairs of adjacent content
	// words) relative to the mean weight of their two words; 0 disables
	// bigrams. Default 0.5.
	BigramWeight float64
	// TopFeatures is how many of the heaviest features Result.Top lists.
	// Default 10; 0 lists none.
	TopFeatures int
	// MaxBytes bounds len(Title)+len(Body); larger documents get ErrTooLarge.
	// Default 16 MiB.
	MaxBytes int
}

// DefaultConfig returns the configuration simdex fingerprints with unless
// told otherwise. RecipeVersion describes the output of this configuration.
func DefaultConfig() Config {
	return Config{
		MinFeatures:  3,
		TitleBoost:   1,
		LeadBoost:    1.25,
		LeadChars:    200,
		BigramWeight: 0.5,
		TopFeatures:  10,
		MaxBytes:     16 << 20,
	}
}

// Validate reports the first unusable setting, wrapped in ErrBadConfig.
func (c Config) Validate() error {
	switch {
	case c.MinFeatures < 1:
		return fmt.Errorf("%w: MinFeatures %d < 1", ErrBadConfig, c.MinFeatures)
	case !(c.TitleBoost >= 1 && c.TitleBoost <= 100):
		return fmt.Errorf("%w: TitleBoost %v not in [1, 100]", ErrBadConfig, c.TitleBoost)
	case !(c.LeadBoost >= 1 && c.LeadBoost <= 100):
		return fmt.Errorf("%w: LeadBoost %v not in [1, 100]", ErrBadConfig, c.LeadBoost)
	case c.LeadChars < 0:
		return fmt.Errorf("%w: LeadChars %d < 0", ErrBadConfig, c.LeadChars)
	case !(c.BigramWeight >= 0 && c.BigramWeight <= 10):
		return fmt.Errorf("%w: BigramWeight %v not in [0, 10]", ErrBadConfig, c.BigramWeight)
	case c.TopFeatures < 0 || c.TopFeatures > 1000:
		return fmt.Errorf("%w: TopFeatures %d not in [0, 1000]", ErrBadConfig, c.TopFeatures)
	case c.MaxBytes < 1:
		return fmt.Errorf("%w: MaxBytes %d < 1", ErrBadConfig, c.MaxBytes)
	}
	return nil
}
