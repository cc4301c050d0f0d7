# pytorch/examples word_language_model (RNNModel: LSTM/GRU with dropout and tied weights, detached
# hidden state across batches, manual SGD with clip_grad_norm_), on a tiny inline corpus.
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, lines):
        self.dictionary = Dictionary()
        self.train = self.tokenize(lines[:-2])
        self.valid = self.tokenize(lines[-2:])

    def tokenize(self, lines):
        idss = []
        for line in lines:
            words = line.split() + ['<eos>']
            for word in words:
                self.dictionary.add_word(word)
            ids = [self.dictionary.word2idx[w] for w in words]
            idss.append(torch.tensor(ids).type(torch.int64))
        return torch.cat(idss)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


torch.manual_seed(1111)
device = torch.device("cpu")
lines = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met on the mat",
         "the mat was red and the log was brown"] * 12 + ["the cat sat on the log", "a dog sat on the mat"]
corpus = Corpus(lines)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


train_data = batchify(corpus.train, 4)
val_data = batchify(corpus.valid, 2)
bptt = 8


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


criterion = nn.NLLLoss()
for rnn_type, tied in (("LSTM", True), ("GRU", False), ("RNN_TANH", False)):
    ntokens = len(corpus.dictionary)
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, 0.2, tied).to(device)
    lr = 5.0

    def evaluate(data_source):
        model.eval()
        total_loss = 0.
        hidden = model.init_hidden(2)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    for epoch in range(1, 4):
        model.train()
        total_loss = 0.
        start_time = time.time()
        hidden = model.init_hidden(4)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
        cur_loss = total_loss / (batch + 1)
        val_loss = evaluate(val_data)
        print('| {} epoch {:3d} | loss {:5.2f} | ppl {:8.2f} | valid ppl {:8.2f}'.format(
            rnn_type, epoch, cur_loss, math.exp(cur_loss), math.exp(val_loss)))
