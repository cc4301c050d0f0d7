# pytorch/examples reinforcement_learning/reinforce.py (policy gradient with Categorical),
# with a tiny inline environment in place of gym's CartPole.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma = 0.99
seed = 543
log_interval = 5


class CorridorEnv:
    """Walk right along a corridor of 6 cells; reward 1 per step survived, episode ends off the left end."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.pos = 2
        self.t = 0
        return self._obs(), {}

    def _obs(self):
        obs = np.zeros(4, dtype=np.float32)
        obs[0] = self.pos / 6.0
        obs[1] = self.t / 20.0
        obs[2] = self.rng.standard_normal() * 0.1
        obs[3] = 1.0
        return obs

    def step(self, action):
        self.pos += 1 if action == 1 else -1
        self.pos = min(self.pos, 6)
        self.t += 1
        terminated = self.pos < 0
        truncated = self.t >= 20
        return self._obs(), 1.0, terminated, truncated, {}


env = CorridorEnv(seed)
torch.manual_seed(seed)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


running_reward = 10
for i_episode in range(1, 31):
    state, _ = env.reset()
    ep_reward = 0
    for t in range(1, 10000):
        action = select_action(state)
        state, reward, done, _, _ = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done or t >= 20:
            break
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    policy_loss = finish_episode()
    if i_episode % log_interval == 0:
        print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}\tpolicy loss {:.4f}'.format(i_episode, ep_reward, running_reward, policy_loss))
print("running reward", running_reward)
